#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The same supervisor loop from Python through ctypes and liblogrx.so.

    LOGRX_LIBRARY=/usr/local/lib/liblogrx.so python3 supervisor.py server.log
"""
import ctypes
import json
import os
import sys

lib = ctypes.CDLL(os.environ.get("LOGRX_LIBRARY", "liblogrx.so"))
lib.logrx_version.restype = ctypes.c_char_p
lib.logrx_rulebook_load.restype = ctypes.c_void_p
lib.logrx_rulebook_load.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int,
                                    ctypes.POINTER(ctypes.c_void_p)]
lib.logrx_rulebook_free.argtypes = [ctypes.c_void_p]
lib.logrx_analyzer_new.restype = ctypes.c_void_p
lib.logrx_analyzer_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p,
                                   ctypes.POINTER(ctypes.c_void_p)]
CALLBACK = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_void_p)
lib.logrx_analyzer_set_callback.argtypes = [ctypes.c_void_p, CALLBACK, ctypes.c_void_p]
lib.logrx_analyzer_feed.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
# Strings logrx allocates come back as void* so they can be handed to logrx_free.
lib.logrx_analyzer_finish.restype = ctypes.c_void_p
lib.logrx_analyzer_finish.argtypes = [ctypes.c_void_p]
lib.logrx_analyzer_free.argtypes = [ctypes.c_void_p]
lib.logrx_free.argtypes = [ctypes.c_void_p]


def take_string(pointer):
    text = ctypes.string_at(pointer).decode("utf-8")
    lib.logrx_free(pointer)
    return text


def main(path):
    error = ctypes.c_void_p()
    book = lib.logrx_rulebook_load(None, 0, 1, ctypes.byref(error))
    if not book:
        sys.exit("rulebook: " + take_string(error))
    analyzer = lib.logrx_analyzer_new(book, path.encode(), None, ctypes.byref(error))

    @CALLBACK
    def on_finding(finding_json, _user):
        finding = json.loads(finding_json)
        if finding["severity"] == "fatal":
            print("fatal:", finding["rule"], "at line", finding["line"])

    lib.logrx_analyzer_set_callback(analyzer, on_finding, None)
    with open(path, "rb") as log:
        while chunk := log.read(1 << 16):
            lib.logrx_analyzer_feed(analyzer, chunk, len(chunk))
    report = json.loads(take_string(lib.logrx_analyzer_finish(analyzer)))
    for item in report["remediation"]:
        print("apply:", item.get("flag") or item.get("env"), item.get("value", ""))
    print("logrx", lib.logrx_version().decode(), "findings:", report["summary"]["findings"])
    lib.logrx_analyzer_free(analyzer)
    lib.logrx_rulebook_free(book)


if __name__ == "__main__":
    main(sys.argv[1])
