build-dev/pipeline/trace_read.o: pipeline/trace_read.c \
 pipeline/trace_read.h pipeline/json_scan.h pipeline/pp.h
pipeline/trace_read.h:
pipeline/json_scan.h:
pipeline/pp.h:
