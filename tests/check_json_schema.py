#!/usr/bin/python3
"""check_json_schema.py SCHEMA INSTANCE - validate a knobwise export against
its JSON Schema with Debian's python3-jsonschema (tests/test_export.c runs it).

Exit 0 when the schema is itself valid (Draft 2020-12 meta-schema) and the
instance conforms; 1 with every violation printed (path: message) when it
does not; 3 when jsonschema is not installed (the test then fails, naming
the Debian package, rather than skipping).
"""
import json
import sys

try:
    import jsonschema
except ImportError:
    print("python3-jsonschema is not installed (Debian package python3-jsonschema)", file=sys.stderr)
    sys.exit(3)


def main():
    with open(sys.argv[1], encoding="utf-8") as f:
        schema = json.load(f)
    with open(sys.argv[2], encoding="utf-8") as f:
        instance = json.load(f)
    cls = jsonschema.Draft202012Validator
    cls.check_schema(schema)
    errors = sorted(cls(schema).iter_errors(instance), key=lambda e: list(e.absolute_path))
    for e in errors:
        path = "/".join(str(p) for p in e.absolute_path) or "(root)"
        print(f"{sys.argv[2]}: {path}: {e.message}")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
