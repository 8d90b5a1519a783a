build-dev/pipeline/walk.o: pipeline/walk.c pipeline/pp.h \
 pipeline/strbuf.h pipeline/walk.h
pipeline/pp.h:
pipeline/strbuf.h:
pipeline/walk.h:
