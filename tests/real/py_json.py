"""json round-trip of a nested document, through a file and through a string."""
import json
import os
import sys
import tempfile

doc = {
    "name": "strata",
    "ints": list(range(-5, 6)),
    "floats": [0.1, 1e300, -2.5e-300, 3.141592653589793],
    "unicode": "h\u00e9llo w\u00f6rld \u2603 \U0001F600",
    "nested": {"a": [{"b": None, "c": True, "d": False}] * 3, "empty": {}},
    "big": [{"k%d" % i: "v" * (i % 17)} for i in range(2000)],
}
text = json.dumps(doc, sort_keys=True, indent=1)
assert json.loads(text) == doc
with tempfile.NamedTemporaryFile("w+", suffix=".json", delete=False, encoding="utf-8") as f:
    json.dump(doc, f, ensure_ascii=False)
    name = f.name
with open(name, encoding="utf-8") as f:
    again = json.load(f)
os.unlink(name)
print("round trip equal:", again == doc)
print("length:", len(text))
print("compact:", json.dumps(doc["nested"], separators=(",", ":")))
try:
    json.loads('{"a": [1, 2,]}')
except json.JSONDecodeError as e:
    print("decode error:", e)
sys.stdout.flush()
sys.exit(0)
