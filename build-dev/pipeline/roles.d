build-dev/pipeline/roles.o: pipeline/roles.c pipeline/arena.h \
 pipeline/classify_priv.h pipeline/htab.h pipeline/patterns.h \
 pipeline/rank_result.h
pipeline/arena.h:
pipeline/classify_priv.h:
pipeline/htab.h:
pipeline/patterns.h:
pipeline/rank_result.h:
