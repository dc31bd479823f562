#!/usr/bin/env python3
"""What the OTT operator guide (docs/ott-redundancy.md) must say, checked against the code:

o21: the hls.js load policy the guide tells operators to set is the one the project's browser
     tests play with (tests/e2e/page.js, `ott=1`), and it is what O-21 asks: the first byte
     within about one target duration, the whole load within about two, no retry after a
     timeout (the backup is the retry), one after an error.
o17: the guide states the headroom each node needs, 1 + 1/(N-1) times its normal load, and
     the figures it gives for two, three and four nodes are that formula's.

Usage: ott_guide_test.py o17|o21 SOURCE_DIR. Exit status 1, naming the difference, otherwise."""
import re
import sys

KEYS = {
    "maxTimeToFirstByteMs": r"maxTimeToFirstByteMs:\s*(\d+)",
    "maxLoadTimeMs": r"maxLoadTimeMs:\s*(\d+)",
    "timeoutRetry.maxNumRetry": r"timeoutRetry:\s*\{\s*maxNumRetry:\s*(\d+)",
    "errorRetry.maxNumRetry": r"errorRetry:\s*\{\s*maxNumRetry:\s*(\d+)",
}


def policy(text, start_pattern, where):
    match = re.search(start_pattern, text)
    if not match:
        sys.exit(f"FAIL: no load policy found in {where} ({start_pattern})")
    block = text[match.end():match.end() + 600]
    values = {}
    for key, pattern in KEYS.items():
        found = re.search(pattern, block)
        if not found:
            sys.exit(f"FAIL: {where}: {key} not found in the load policy")
        values[key] = int(found.group(1))
    return values


def headroom(guide):
    guide = re.sub(r"\n>\s*", " ", guide)  # a quoted paragraph as one line
    if "1 + 1/(N−1) times its normal load" not in guide:
        sys.exit("FAIL: the guide does not state the headroom formula 1 + 1/(N−1)")
    words = {"two": 2, "three": 3, "four": 4}
    found = re.findall(r"\*{0,2}([\d.]+)×\*{0,2}\s+with\s+(two|three|four)", guide)
    if len(found) < 3:
        sys.exit(f"FAIL: the guide gives {len(found)} headroom figures, expected two, three, four")
    for figure, nodes in found:
        n = words[nodes]
        expected = 1 + 1 / (n - 1)
        if abs(float(figure) - expected) > 0.005:
            sys.exit(f"FAIL: the guide says {figure}× with {nodes} nodes, 1 + 1/(N−1) = "
                     f"{expected:.2f}")
    print(f"PASS: O-17 headroom figures {found} follow 1 + 1/(N−1)")


def main():
    mode, root = sys.argv[1], sys.argv[2]
    guide = open(f"{root}/docs/ott-redundancy.md", encoding="utf-8").read()
    if mode == "o17":
        return headroom(guide)
    if mode != "o21":
        sys.exit(f"usage: {sys.argv[0]} o17|o21 SOURCE_DIR")
    page = open(f"{root}/tests/e2e/page.js", encoding="utf-8").read()
    documented = policy(guide, r"const ottLoadPolicy = \{", "docs/ott-redundancy.md")
    tested = policy(page, r"var fast = \{", "tests/e2e/page.js")
    if documented != tested:
        sys.exit(f"FAIL: the guide's policy {documented} is not the tested one {tested}")
    # The guide's example is for 2 s segments ("For 2 s segments:").
    if "For 2 s segments" not in guide:
        sys.exit("FAIL: the guide no longer says which target duration its values are for")
    target_ms = 2000
    checks = [
        (documented["maxTimeToFirstByteMs"] == target_ms, "first byte: one target duration"),
        (documented["maxLoadTimeMs"] == 2 * target_ms, "whole load: two target durations"),
        (documented["timeoutRetry.maxNumRetry"] == 0, "no retry after a timeout"),
        (documented["errorRetry.maxNumRetry"] == 1, "one retry after an error"),
    ]
    failed = [what for ok, what in checks if not ok]
    if failed:
        sys.exit(f"FAIL: {documented}: not " + "; ".join(failed))
    print(f"PASS: O-21 policy {documented} documented and tested")


if __name__ == "__main__":
    main()
