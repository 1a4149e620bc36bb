"""Code examples of the docs, cut out of the Markdown and compiled.

As the CMake build's mesh_doc_example: the example is the fenced block
between `<!-- NAME:begin -->` and `<!-- NAME:end -->`; with `wrap`, it is a
function body and gets mesh.h and a main() around it.
"""

load("//bazel:copts.bzl", "MESH_COPTS")

def doc_example(name, markdown, wrap = False, deps = ["//:mesh"]):
    """A cc_binary `name` compiled from the example `name` (with - for _) of `markdown`."""
    marker = name.replace("_", "-")
    head = "printf '#include \"mesh/mesh.h\"\\nint main() {\\n'; " if wrap else ""
    tail = "printf 'return 0;\\n}\\n'; " if wrap else ""
    native.genrule(
        name = name + "_src",
        srcs = [markdown],
        outs = [name + ".cc"],
        cmd = " ".join([
            "grep -q '<!-- {m}:begin -->' $< && grep -q '<!-- {m}:end -->' $<".format(m = marker),
            "|| {{ echo '$<: no {m} markers' >&2; exit 1; }};".format(m = marker),
            "{",
            head,
            "awk '/<!-- {m}:begin -->/ {{ on = 1; next }} /<!-- {m}:end -->/ {{ on = 0 }}".format(m = marker),
            "on && !/^```/' $<;",
            tail,
            "} > $@",
        ]),
    )
    native.cc_binary(
        name = name,
        srcs = [name + ".cc"],
        copts = MESH_COPTS,
        deps = deps,
    )
