#!/bin/sh
# carry.sh - puts the built knobwise and the shared libraries it links
# (GSL, libxml2 and theirs, not the C library's own) into .gpu/, so that
# tests/cuda/first_run.sh can run a measured tune on a device machine whose
# image lacks them: pass .gpu in the device run's carry. Run from the
# repository root after `make`. .gpu/ is in .gitignore. About 40 MB (ICU's
# data is 30 of it).
set -eu
[ -x ./knobwise ] || { echo "carry.sh: build first (make)" >&2; exit 1; }
rm -rf .gpu
mkdir -p .gpu/lib
# the program itself, not libtool's wrapper (knobwise is linked statically
# against the project's own libraries: it is the binary)
cp ./knobwise .gpu/knobwise
ldd ./knobwise | awk '$3 ~ /^\// {print $3}' | while read -r so; do
    case "$(basename "$so")" in
    libc.so.* | libm.so.* | libpthread.so.* | libdl.so.* | librt.so.* | ld-linux*) ;;
    *) cp -L "$so" .gpu/lib/ ;;
    esac
done
du -sh .gpu
