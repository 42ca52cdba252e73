"""`borrow`: a view of an array that holds no reference to its memory.

numba counts references to an array's memory with atomic increments: every view taken, and every array passed
into an inlined helper, costs a locked instruction pair. A proposal touches its scratch rows through a few
hundred such pairs (about half of its time, measured with an instrumented runtime). A borrowed view has no
memory-info pointer, so numba's reference counting skips it (a null check). The caller keeps the owner alive
for as long as the view is used: only borrow arguments (or views of them) inside the call that received them,
and never return or store a borrowed view.
"""
from numba.core import cgutils, types
from numba.core.errors import TypingError
from numba.extending import intrinsic


def _borrowed_array(context, builder, aryty, value):
    src = context.make_array(aryty)(context, builder, value=value)
    out = context.make_array(aryty)(context, builder)
    out.meminfo = cgutils.get_null_value(out.meminfo.type)
    out.parent = cgutils.get_null_value(out.parent.type)
    out.nitems = src.nitems
    out.itemsize = src.itemsize
    out.data = src.data
    out.shape = src.shape
    out.strides = src.strides
    return out._getvalue()


@intrinsic
def borrow(typingctx, obj):
    """The same array (data, shape, strides), typed List, or tuple of arrays, with no reference to its memory;
    see the module docstring."""
    if isinstance(obj, types.Array):
        def codegen(context, builder, signature, args):
            return _borrowed_array(context, builder, obj, args[0])
        return obj(obj), codegen
    if isinstance(obj, types.ListType):
        def codegen_list(context, builder, signature, args):
            src = cgutils.create_struct_proxy(obj)(context, builder, value=args[0])
            out = cgutils.create_struct_proxy(obj)(context, builder)
            out.meminfo = cgutils.get_null_value(out.meminfo.type)
            out.data = src.data
            return out._getvalue()
        return obj(obj), codegen_list
    if isinstance(obj, types.BaseTuple) and all(isinstance(t, types.Array) for t in obj):
        def codegen_tuple(context, builder, signature, args):
            items = [_borrowed_array(context, builder, t, builder.extract_value(args[0], i))
                     for i, t in enumerate(obj)]
            return context.make_tuple(builder, obj, items)
        return obj(obj), codegen_tuple
    raise TypingError(f"borrow takes an array, a typed List or a tuple of arrays, got {obj}")
