/* Replays fuzz inputs without libFuzzer: `replay FILE...` feeds each file to
 * the target's LLVMFuzzerTestOneInput once. Linked with a target in the
 * sanitizer build, it turns every corpus file and every past crash
 * (tests/fuzz/regress/<target>/) into a regression test of `make check`. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 2;
		}
		size_t cap = 1 << 16, n = 0, got;
		uint8_t *buf = malloc(cap);
		while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
			n += got;
			if (n == cap) {
				uint8_t *nb = realloc(buf, cap *= 2);
				if (!nb)
					free(buf);
				buf = nb;
			}
		}
		fclose(f);
		if (!buf) {
			fprintf(stderr, "replay: out of memory on %s\n", argv[i]);
			return 2;
		}
		LLVMFuzzerTestOneInput(buf, n);
		free(buf);
	}
	return 0;
}
