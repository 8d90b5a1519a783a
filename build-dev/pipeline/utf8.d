build-dev/pipeline/utf8.o: pipeline/utf8.c pipeline/utf8.h \
 pipeline/strbuf.h
pipeline/utf8.h:
pipeline/strbuf.h:
