build-dev/pipeline/gen_layout.o: pipeline/gen_layout.c \
 pipeline/gen_layout.h pipeline/pp.h
pipeline/gen_layout.h:
pipeline/pp.h:
