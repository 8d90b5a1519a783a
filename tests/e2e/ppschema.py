"""ppschema.py — new pptrace databases for test databases written by Python
helpers. The file is created by the real ppbatch (on an empty folder), so
it has exactly the schema of storage/schema.c and the code tables written
from model/rank_result.h; the category and phase codes are read back from
it, never restated here."""
import os
import sqlite3
import subprocess
import tempfile

# Filled by create() from the new database's category_codes / phase_codes.
CATS = []            # CATS[code] = category name
PHASES = {None: 0}   # phase name -> code (None: no step)
# Kernel types: the codes of model/rank_result.h's enum rr_type, which the
# kernels view spells out ('comp', 'comm', 'mem').
TYPES = {"comp": 0, "comm": 1, "mem": 2}


def create(path):
    """A new, empty database at path with the current schema."""
    if os.path.exists(path):
        os.unlink(path)
    ppbatch = os.path.join(os.environ["PP_BIN"], "ppbatch")
    with tempfile.TemporaryDirectory() as empty:
        subprocess.run([ppbatch, "--input", empty, "--db", path, "--quiet"], check=True)
    db = sqlite3.connect(path)
    db.execute("DELETE FROM runs")
    CATS[:] = [None] * db.execute("SELECT max(code) + 1 FROM category_codes").fetchone()[0]
    for code, name in db.execute("SELECT code, name FROM category_codes"):
        CATS[code] = name
    PHASES.update({name: code for code, name in db.execute("SELECT code, name FROM phase_codes")})
    return db
