"""C++ and gRPC code generated from .proto files by the system's protoc.

No proto_library / cc_proto_library here: in Bazel 4 those need the
protobuf source repository (@com_google_protobuf), which is downloaded.
Instead, a genrule runs the protoc and grpc_cpp_plugin that the
`system_libs` repository found on PATH, and a cc_library compiles the
result against the system's protobuf and gRPC.
"""

load("//bazel:copts.bzl", "GENERATED_COPTS")

def grpc_cc_protos(name, srcs, import_root, deps = [], **kwargs):
    """Generates and compiles the messages and gRPC stubs of `srcs`.

    Args:
      name: the cc_library of the generated code (the genrule is name + "_gen").
      srcs: .proto files, all under `import_root`.
      import_root: the directory, relative to this package, that the .proto
        files' imports are relative to (protoc -I). A file at
        import_root/a/b.proto gives a/b.pb.h, a/b.grpc.pb.h and their .cc
        files in this package's output directory, so that called from the
        top-level package they are included as "a/b.pb.h".
      deps: further dependencies of the generated code.
      **kwargs: passed to the cc_library (visibility, tags, ...).
    """
    root = import_root.rstrip("/") + "/"
    package = native.package_name()
    protoc_root = (package + "/" + root) if package else root

    stems = []
    for src in srcs:
        if not src.startswith(root) or not src.endswith(".proto"):
            fail("grpc_cc_protos: {} is not a .proto file under {}".format(src, root))
        stems.append(src[len(root):-len(".proto")])

    hdrs = []
    cc_srcs = []
    for stem in stems:
        hdrs += [stem + ".pb.h", stem + ".grpc.pb.h"]
        cc_srcs += [stem + ".pb.cc", stem + ".grpc.pb.cc"]

    native.genrule(
        name = name + "_gen",
        srcs = srcs,
        outs = hdrs + cc_srcs,
        tools = [
            "@system_libs//:protoc",
            "@system_libs//:grpc_cpp_plugin",
        ],
        cmd = " ".join([
            "$(location @system_libs//:protoc)",
            "-I" + protoc_root,
            "--cpp_out=$(RULEDIR)",
            "--grpc_out=$(RULEDIR)",
            "--plugin=protoc-gen-grpc=$(location @system_libs//:grpc_cpp_plugin)",
            "$(SRCS)",
        ]),
        message = "protoc (C++ and gRPC) " + import_root,
    )

    native.cc_library(
        name = name,
        srcs = cc_srcs,
        hdrs = hdrs,
        copts = GENERATED_COPTS,
        deps = deps + [
            "@system_libs//:grpcpp",
            "@system_libs//:protobuf",
        ],
        **kwargs
    )
