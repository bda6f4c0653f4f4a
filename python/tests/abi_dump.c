/*
 * Prints, as JSON, the size and field offsets of the C structs the Python package still
 * declares with ctypes (python/lancever/_lib.py), computed by the compiler from the
 * public headers: the Arrow C Data / C Stream Interface (a fixed ABI of the Arrow
 * specification).  Every lancever struct the package reads from the library's own
 * description (lv_struct_field), so it is not here.  python/tests/test_abi.py compares them with ctypes' own.
 */
#include <stddef.h>
#include <stdio.h>

#include <lancever/lancever.h>
#include <lancever/arrow.h>

static int first_struct = 1, first_field;

static void begin(const char *name, size_t size)
{
	printf("%s\"%s\":{\"size\":%zu,\"fields\":{", first_struct ? "" : ",", name, size);
	first_struct = 0;
	first_field = 1;
}

static void field(const char *name, size_t off)
{
	printf("%s\"%s\":%zu", first_field ? "" : ",", name, off);
	first_field = 0;
}

static void end(void)
{
	printf("}}");
}

#define S(T) begin(#T, sizeof(T))
#define F(T, f) field(#f, offsetof(T, f))

int main(void)
{
	printf("{\"structs\":{");
	S(struct ArrowSchema); F(struct ArrowSchema, format); F(struct ArrowSchema, name);
	F(struct ArrowSchema, metadata); F(struct ArrowSchema, flags); F(struct ArrowSchema, n_children);
	F(struct ArrowSchema, children); F(struct ArrowSchema, dictionary); F(struct ArrowSchema, release);
	F(struct ArrowSchema, private_data); end();
	S(struct ArrowArray); F(struct ArrowArray, length); F(struct ArrowArray, null_count);
	F(struct ArrowArray, offset); F(struct ArrowArray, n_buffers); F(struct ArrowArray, n_children);
	F(struct ArrowArray, buffers); F(struct ArrowArray, children); F(struct ArrowArray, dictionary);
	F(struct ArrowArray, release); F(struct ArrowArray, private_data); end();
	S(struct ArrowArrayStream); F(struct ArrowArrayStream, get_schema);
	F(struct ArrowArrayStream, get_next); F(struct ArrowArrayStream, get_last_error);
	F(struct ArrowArrayStream, release); F(struct ArrowArrayStream, private_data); end();
	printf("}}\n");
	return 0;
}
