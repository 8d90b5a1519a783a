build-dev/storage/schema.o: storage/schema.c pipeline/pp.h \
 storage/schema.h
pipeline/pp.h:
storage/schema.h:
