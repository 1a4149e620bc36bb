// MESH_INTERNAL_EXPORT marks the internal symbols that mesh's second
// library, libmesh_xds, calls in libmesh: a shared libmesh, built with
// hidden visibility (include/mesh/export.h), exports them beside its public
// API. They are not API: no header of include/ declares them, and they
// change at will.
//
//   class MESH_INTERNAL_EXPORT TimerThread { ... };
//
// A macro only; nothing to own or lock.
#ifndef MESH_SRC_BASE_INTERNAL_EXPORT_H_
#define MESH_SRC_BASE_INTERNAL_EXPORT_H_

#if defined(__GNUC__) || defined(__clang__)
#define MESH_INTERNAL_EXPORT __attribute__((visibility("default")))
#else
#define MESH_INTERNAL_EXPORT
#endif

#endif  // MESH_SRC_BASE_INTERNAL_EXPORT_H_
