build-dev/pipeline/json_scan.o: pipeline/json_scan.c pipeline/json_scan.h
pipeline/json_scan.h:
