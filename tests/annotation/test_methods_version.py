"""The methods text's version is tied to what it describes: a change to the wording, to
the interval descriptions in the results document, or to the code that computes the
intervals needs a decision about METHODS_VERSION (a pasted paragraph cites it)."""

import hashlib
import inspect
import json
import re
from pathlib import Path

from annotation import methods
from annotation.stats import clustered, icc, intervals, minimum, preferences, rules, style

REPO = Path(__file__).resolve().parents[2]

# The fingerprint of each version's wording and code, recorded when the version was set.
RECORDED = {
    "chatanime-methods/4": "a079ce162903aa97b53f339568f3e6e37594711e3fdbe28a962d81fdc68f6a21",
    "chatanime-methods/5": "3c0d3ca2ce9534153b503cb129403cbd5c35c5e14d9c8b5c4ae09c05500a8e4f",
    "chatanime-methods/6": "6024439d9401cfeda4f6df521af48faeedfa16595f49d54f6c03cee9741bd43e",
    "chatanime-methods/7": "fcff94c4fb56caf8e35c6668f4f8870f25c7011d70bacab12d83a7c6a27432a3",
    "chatanime-methods/8": "60df43e4a8b594c0d7e0e5d8544b08392f8301a45a213548f6456dd80bb3eeec",
}


def fingerprint() -> str:
    parts = [
        json.dumps(rules.METHODS, sort_keys=True),
        inspect.getsource(methods._EN),
        inspect.getsource(methods._ZH),
        inspect.getsource(intervals),
        inspect.getsource(minimum),
        inspect.getsource(style),
        inspect.getsource(clustered),
        inspect.getsource(icc),
        inspect.getsource(preferences),
    ]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def test_the_methods_version_matches_the_code_it_describes():
    assert methods.METHODS_VERSION in RECORDED, "record the new version's fingerprint"
    assert fingerprint() == RECORDED[methods.METHODS_VERSION], (
        "The methods text or the statistics it describes changed: if what a paper would "
        "cite changed, bump METHODS_VERSION (annotation/stats/rules.py) and record the new "
        f"fingerprint {fingerprint()} for it; if not (a comment, formatting), record the "
        "new fingerprint for the current version."
    )


def test_the_results_document_and_the_documentation_cite_the_current_version():
    assert rules.METHODS["version"] == methods.METHODS_VERSION
    documents = [REPO / "README.md", REPO / "bench" / "README.md", *(REPO / "docs").rglob("*.md")]
    cited = {
        version
        for document in documents
        for version in re.findall(r"chatanime-methods/\d+", document.read_text(encoding="utf-8"))
    }
    assert cited == {methods.METHODS_VERSION}
