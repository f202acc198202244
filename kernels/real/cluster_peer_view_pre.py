# from typing import TypeVar
# from tvm.script import tirx as T

# Buffers declared on pointers the kernel computes, in the apache-tvm 0.27 printer's pre-lowering form:
# each CTA of a 2-CTA cluster maps its peer's `tile` and `bar` with mapa (a generic 64-bit address),
# makes the result a pointer (T.reinterpret to a handle let) and declares a buffer on it.  Through those
# views every lane writes one element of the peer's tile and lane 0 arrives (release, cluster scope) on
# the peer's barrier; each CTA waits on its own barrier (acquire, cluster scope), reads what the peer
# wrote and stores it to out.  A final cluster barrier keeps each CTA alive until its peer is done.

@T.prim_func
def cluster_peer_view_pre(out: T.Buffer((2, 32), "int32")):
    T.func_attr({"tirx.cuda_arch": "sm_100a"})
    with T.attr({"tirx.device_entry": T.bool(True)}):
        v = T.cta_id([2])
        v_4 = T.warp_id([1])
        v_1 = T.lane_id([32])
        v_2, v_3 = T.cta_id_in_cluster([2, 1], preferred=[2, 1])
        buffer = T.alloc_buffer((32,), "int32", scope="shared")
        buffer_1 = T.alloc_buffer((1,), "uint64", scope="shared")
        if v_1 == 0:
            T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_1[0])), T.uint32(1), "init", "", "shared", "b64", "")
            T.ptx.fence("mbarrier_init", "release", "cluster", "")
        T.cuda.cluster_sync()
        buffer_2: T.uint64
        T.ptx.mapa(buffer_2, T.address_of(buffer[0]), T.Cast("uint32", 1 - v_2), "", "u64", "")
        peer_tile_ptr: T.let[T.handle("int32", "shared")] = T.reinterpret(T.handle("int32", "shared").ty, buffer_2)
        buffer_3 = T.decl_buffer((32,), "int32", data=peer_tile_ptr, scope="shared")
        buffer_4: T.uint64
        T.ptx.mapa(buffer_4, T.address_of(buffer_1[0]), T.Cast("uint32", 1 - v_2), "", "u64", "")
        peer_bar_ptr: T.let[T.handle("uint64", "shared")] = T.reinterpret(T.handle("uint64", "shared").ty, buffer_4)
        buffer_5 = T.decl_buffer((1,), "uint64", data=peer_bar_ptr, scope="shared")
        buffer_3[v_1] = v * 100 + v_1
        T.cuda.warp_sync()
        if v_1 == 0:
            T.ptx.mbarrier(T.cuda.cvta_generic_to_shared(T.address_of(buffer_5[0])), T.uint32(1), "arrive", "release", "cluster", "shared::cluster", "b64", "")
        buffer_6: T.uint32 = T.uint32(0)
        while buffer_6 == T.uint32(0):
            T.ptx.mbarrier(buffer_6, T.cuda.cvta_generic_to_shared(T.address_of(buffer_1[0])), T.uint32(0), "try_wait", "parity", "", "acquire", "cluster", "shared", "b64", "")
        out[v, v_1] = buffer[v_1]
        T.cuda.cluster_sync()
