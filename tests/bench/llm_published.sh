#!/bin/sh
# llm_published.sh - knobwise's prediction of a served Llama 3.1 8B on one
# H100 against TensorRT-LLM's published figures (make bench-llm, also run by
# make bench). The figures, the load each was measured at and their source are
# in spaces/workloads/llama3_8b.xml (trtllm_* shapes) and
# tests/bench/llm_trtllm.xml (the configuration). Prints one row per figure:
# what, published, predicted, predicted/published. A ratio away from 1 is a
# miss and is reported as one, never tuned away here.
# Usage: llm_published.sh KNOBWISE SRCDIR
set -eu
kw=$1
src=$2
space="$src/tests/bench/llm_trtllm.xml"
col() { # col CSV NAME: the named column of the data row
    printf '%s\n' "$1" | awk -F, -v n="$2" 'NR==1{for(i=1;i<=NF;i++)if($i==n)c=i} NR==2{print $c}'
}
row() { # row WHAT PUBLISHED PREDICTED
    awk -v w="$1" -v p="$2" -v q="$3" 'BEGIN{printf "%-58s %12.2f %12.2f %7.2f\n", w, p, q, q / p}'
}
printf '%-58s %12s %12s %7s\n' "TensorRT-LLM, Llama 3.1 8B, 1x H100 80GB" published predicted ratio
on8=$("$kw" eval --space "$space" --shape trtllm_online_i467_o256_qps8 --format csv)
on16=$("$kw" eval --space "$space" --shape trtllm_online_i467_o256_qps16 --format csv)
off=$("$kw" eval --space "$space" --shape trtllm_offline_i1000_o1000 --set precision=fp8_e4m3 --format csv)
# online serving (v0.14, BF16, 467 in / 256 out): mean TTFT, mean ITL, output tok/s
# (knobwise reports medians for TTFT and TPOT: p50 is compared with the mean)
row "online QPS 8: TTFT ms (pub. mean, pred. p50)" 26 "$(col "$on8" ttft_p50_us | awk '{print $1/1000}')"
row "online QPS 8: ITL/TPOT ms (pub. mean, pred. p50)" 9 "$(col "$on8" tpot_p50_us | awk '{print $1/1000}')"
row "online QPS 8: output tokens/s" 1959 "$(col "$on8" tokens_per_s)"
row "online QPS 16: TTFT ms (pub. mean, pred. p50)" 30 "$(col "$on16" ttft_p50_us | awk '{print $1/1000}')"
row "online QPS 16: ITL/TPOT ms (pub. mean, pred. p50)" 11 "$(col "$on16" tpot_p50_us | awk '{print $1/1000}')"
row "online QPS 16: output tokens/s" 3765 "$(col "$on16" tokens_per_s)"
# offline maximum throughput (v0.17, FP8, 1000 in / 1000 out, all requests at once)
row "offline FP8 1000/1000: tokens/s" 15244.78 "$(col "$off" tokens_per_s)"
