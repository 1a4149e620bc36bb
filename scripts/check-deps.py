#!/usr/bin/env python3
"""Checks the dependency rule of mesh's parts: who may include whom.

    scripts/check-deps.py [ROOT]

Each folder under src/ is a part. A part may include its own headers, the
headers of the parts listed for it below, the public headers (mesh/...) of
those parts, Abseil, the C++ and C libraries, and the outside libraries
listed for it: nothing else. So the part graph runs one way (base at the
bottom, channel at the top), and the parts that must stay free of gRPC,
protobuf and c-ares cannot start to use them unnoticed (Debian puts their
headers on the default include path, so the build alone would not notice).

Every public header belongs to the part that implements it (PUBLIC_OWNERS):
a part includes it only if it may include that part, and a public header
includes only the public headers its part may, Abseil and the standard
library. A new public header without an owner is itself a broken rule.

tools/ has a rule of its own (TOOLS): mesh's public headers, and only the
internal headers listed for each tool.

Prints one line per broken rule (file, line, what it includes, what the part
may use) and exits 1; exits 0 when every include keeps to the rule.
"""
import os
import re
import sys

# part -> (parts it may include, outside libraries it may include)
PARTS = {
    "base": ((), ()),
    "model": (("base",), ()),
    "balance": (("base", "model"), ()),
    "route": (("base", "model"), ("re2",)),
    "metrics": (("base", "model"), ()),
    # The tap hook decorates a Transport.
    "tap": (("base", "model", "transport"), ("grpc", "protobuf", "proto")),
    # Identity: certificate checks and TLS credentials.
    "tls": (("base", "model"), ("grpc", "openssl", "re2")),
    "transport": (("base", "model", "tls"), ("grpc",)),
    "discovery": (("base", "model", "route", "tls", "transport"),
                  ("grpc", "protobuf", "proto", "re2", "c-ares")),
    # The admin page: an HTTP/1.1 server over what the Mesh gives it
    # (its JSON, its metrics, tap subscriptions); the only part that sees
    # libmicrohttpd and its TLS library, GnuTLS (a client's certificate,
    # whose names src/tls reads).
    "admin": (("base", "model", "tap", "tls"), ("microhttpd", "gnutls", "grpc")),
    "channel": (("base", "model", "balance", "route", "metrics", "tap",
                 "tls", "transport", "discovery", "admin"),
                ("grpc", "protobuf", "proto")),
    "proto": ((), ()),  # .proto files only
    # Plain HTTP through the application's libcurl (library mesh_curl): a
    # client of the channel's external calls, with the tap hook and the TLS
    # checks; the only part that sees libcurl.
    "curl": (("base", "model", "tap", "tls", "channel"), ("curl", "openssl")),
}
# include/mesh/NAME -> the part that implements it. The data every part
# exchanges (endpoints, options, identities, metadata) is the model's.
PUBLIC_OWNERS = {
    "cancellation.h": "base",
    "export.h": "base",  # the mark of what the libraries export
    "balancer.h": "model",
    "endpoint.h": "model",
    "metadata.h": "model",
    "service_config.h": "model",
    "tls.h": "model",
    "transport.h": "transport",
    # The service-provider interfaces (include/mesh/spi/): what a source
    # and a transport implement, the parts that own those roles.
    "spi/transport.h": "transport",
    "spi/discovery_source.h": "discovery",
    "tap.h": "tap",
    "discovery.h": "discovery",
    "dns.h": "discovery",
    "xds.h": "discovery",
    "channel.h": "channel",
    "mesh.h": "channel",
    "stream.h": "channel",
    "curl.h": "curl",
}
# The outside libraries a public header may include: none, but the one
# whose handles its API takes (mesh/curl.h is about CURL* handles).
PUBLIC_LIBS = {
    "curl.h": ("curl",),
}
# Folders of include/mesh/ whose headers are checked as the others are.
PUBLIC_FOLDERS = ("spi",)
# Files of a part held to a narrower rule than their folder.
NARROWER = [
    # The tap model, hub and decorator: Abseil only (the Observe server,
    # observe_*, speaks gRPC).
    (re.compile(r"^src/tap/tap_"), "the tap model (src/tap/tap_*)", ()),
]

# tools/: the programs use mesh through its public headers (mesh/...),
# beside tools/common, Abseil, the C and C++ libraries, gRPC, protobuf, the
# protos, OpenSSL and RE2. Of mesh's internals, a tool file may include only what
# its rule below lists (the first rule whose pattern matches its path): the
# control plane, a server of the control-plane protocols, the base and the
# model; the servers' TLS set-up, the library's certificate checks; every
# other tool, two text helpers of the base (JSON string literals,
# printable text), nothing that does what mesh does.
TOOLS = [
    (re.compile(r"^tools/mesh-control-plane/"),
     "the control plane (tools/mesh-control-plane)", ("base", "model"), ()),
    (re.compile(r"^tools/common/server_tls\.cc$"),
     "the servers' TLS set-up (tools/common/server_tls.cc)", (),
     ("src/tls/certificate_check.h",)),
    (re.compile(r"^tools/"), "a tool", (),
     ("src/base/json_string.h", "src/base/utf8.h")),
]
TOOL_LIBS = ("grpc", "protobuf", "proto", "openssl", "re2", "curl")

OUTSIDE = [
    ("grpc", re.compile(r"^(grpc|grpcpp)/")),
    ("protobuf", re.compile(r"^google/protobuf/")),
    ("c-ares", re.compile(r"^(ares|ares_[a-z_]+)\.h$")),
    ("re2", re.compile(r"^re2/")),
    ("openssl", re.compile(r"^openssl/")),
    ("curl", re.compile(r"^curl/")),
    ("microhttpd", re.compile(r"^microhttpd\.h$")),
    ("gnutls", re.compile(r"^gnutls/")),
    ("proto", re.compile(r"^[a-z0-9_/]+\.(pb|grpc\.pb)\.h$")),
]
INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[">]')
SOURCE = re.compile(r"\.(h|cc)$")


def classify(header):
    """('part', name), ('outside', lib), or ('free', None)."""
    m = re.match(r"^src/([a-z_]+)/", header)
    if m:
        return "part", m.group(1)
    m = re.match(r"^mesh/((?:spi/)?[a-z_]+\.h)$", header)
    if m:
        # An unowned public header is reported by main(); free meanwhile.
        owner = PUBLIC_OWNERS.get(m.group(1))
        return ("part", owner) if owner else ("free", None)
    for lib, pattern in OUTSIDE:
        if pattern.search(header):
            return "outside", lib
    return "free", None  # absl/..., the C and C++ libraries


def includes(root, path):
    """(line number, header, its classify()) for each #include of a file."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield (number, m.group(1)) + classify(m.group(1))


def check_file(root, path, parts, libs, rule_name, problems, public=False):
    for number, header, kind, name in includes(root, path):
        if public and header.startswith("src/"):
            problems.append(
                f"{path}:{number}: includes {header}: {rule_name} may "
                f"include only public headers (mesh/...)")
        elif kind == "part" and name not in parts:
            problems.append(
                f"{path}:{number}: includes {header}: {rule_name} may not "
                f"depend on src/{name} (may: "
                f"{', '.join('src/' + p for p in parts) or 'no other part'})")
        elif kind == "outside" and name not in libs:
            problems.append(
                f"{path}:{number}: includes {header}: {rule_name} may not "
                f"depend on {name} (may: "
                f"{', '.join(libs) or 'Abseil and the standard library only'})")


def check_tool(root, path, problems):
    rule_name, parts, headers = None, (), ()
    for pattern, name, rule_parts, rule_headers in TOOLS:
        if pattern.search(path):
            rule_name, parts, headers = name, rule_parts, rule_headers
            break
    for number, header, kind, name in includes(root, path):
        if header.startswith("src/"):
            if name in parts or header in headers:
                continue
            allowed = [f"src/{p}" for p in parts] + list(headers)
            problems.append(
                f"{path}:{number}: includes {header}: {rule_name} may use "
                f"mesh's public headers only (and: "
                f"{', '.join(allowed) or 'nothing else'})")
        elif kind == "outside" and name not in TOOL_LIBS:
            problems.append(
                f"{path}:{number}: includes {header}: {rule_name} may not "
                f"depend on {name}")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..")
    problems = []
    src = os.path.join(root, "src")
    for part in sorted(os.listdir(src)):
        if part not in PARTS:
            problems.append(f"src/{part}: a part with no rule in "
                            f"scripts/check-deps.py")
            continue
        allowed_parts, libs = PARTS[part]
        parts = (part,) + allowed_parts
        for folder, _, files in os.walk(os.path.join(src, part)):
            for name in sorted(files):
                if not SOURCE.search(name):
                    continue
                path = os.path.relpath(os.path.join(folder, name), root)
                rule_name, rule_libs = f"src/{part}", libs
                for pattern, narrower_name, narrower_libs in NARROWER:
                    if pattern.search(path):
                        rule_name, rule_libs = narrower_name, narrower_libs
                check_file(root, path, parts, rule_libs, rule_name, problems)
    public = os.path.join(root, "include", "mesh")
    names = sorted(os.listdir(public))
    for name in list(names):
        if name in PUBLIC_FOLDERS:
            names.remove(name)
            names += sorted(f"{name}/{n}"
                            for n in os.listdir(os.path.join(public, name)))
    for name in names:
        path = f"include/mesh/{name}"
        if os.path.isdir(os.path.join(public, name)):
            problems.append(f"{path}: a folder of public headers with no "
                            f"rule in scripts/check-deps.py")
            continue
        if not SOURCE.search(name):
            continue
        owner = PUBLIC_OWNERS.get(name)
        if owner is None:
            problems.append(f"{path}: a public header with no owning part "
                            f"in scripts/check-deps.py (PUBLIC_OWNERS)")
            continue
        check_file(root, path, (owner,) + PARTS[owner][0],
                   PUBLIC_LIBS.get(name, ()),
                   f"a public header of src/{owner}", problems, public=True)
    for folder, _, files in os.walk(os.path.join(root, "tools")):
        for name in sorted(files):
            if SOURCE.search(name):
                check_tool(root, os.path.relpath(os.path.join(folder, name),
                                                 root), problems)
    for p in problems:
        print(p)
    if problems:
        print(f"check-deps: {len(problems)} break(s) of the rule")
        return 1
    print("check-deps: every include keeps to the part graph")
    return 0


if __name__ == "__main__":
    sys.exit(main())
