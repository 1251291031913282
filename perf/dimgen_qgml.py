"""qgml's runs in perf/dimension_generalisation.py: `qgml train DATA.csv` with every default, plus the
--qgml-args of the run (qgml_train)."""
import dimbench_qgml as db  # the module of run_qgml_train and of the run_qgml it calls (wrapped below)


def qgml_train(args, csv, runs_dir, tag):
    """db.run_qgml_train with --qgml-args appended to the command line (db.run_qgml wrapped for the call)."""
    extra = args.qgml_args_list
    if not extra:
        return db.run_qgml_train(args, csv, runs_dir, tag)
    orig = db.run_qgml
    db.run_qgml = lambda qgml, a, timeout, what: orig(qgml, list(a) + extra, timeout, what)
    try:
        return db.run_qgml_train(args, csv, runs_dir, tag)
    finally:
        db.run_qgml = orig
