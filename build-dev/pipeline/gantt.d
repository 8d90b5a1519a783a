build-dev/pipeline/gantt.o: pipeline/gantt.c pipeline/gantt.h \
 pipeline/arena.h pipeline/pp.h pipeline/safefile.h pipeline/strbuf.h
pipeline/gantt.h:
pipeline/arena.h:
pipeline/pp.h:
pipeline/safefile.h:
pipeline/strbuf.h:
