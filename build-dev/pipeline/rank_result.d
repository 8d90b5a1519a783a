build-dev/pipeline/rank_result.o: pipeline/rank_result.c \
 pipeline/patterns.h pipeline/pp.h pipeline/rank_result.h \
 pipeline/strbuf.h
pipeline/patterns.h:
pipeline/pp.h:
pipeline/rank_result.h:
pipeline/strbuf.h:
