build-dev/pipeline/strbuf.o: pipeline/strbuf.c pipeline/strbuf.h \
 pipeline/pp.h
pipeline/strbuf.h:
pipeline/pp.h:
