"""The fixed settings of supervised_examples.py: its folders, the seeds and fractions of the splits, and
the qgml settings of every run (QGML_COMMON, qgml_settings)."""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SPLIT_SEED = 0      # train/test split
CV_SEED = 0         # folds of the grid searches
TEST_FRACTION = 0.25
SELECTION_FRACTION = 0.2   # hold-out of the training split that picks qgml's number of epochs

# qgml settings shared by every run; N and the epochs vary (see qgml_settings()).
QGML_COMMON = {
    "training.batch_size": "64",
    "training.lr": "0.01",
    "training.early_stop": "0",          # a fixed number of epochs
    "training.patience": "0",            # the validation file is the test split: never stop or choose on it
    "training.checkpoint_every": "0",    # only the final checkpoint
    "data.validation_fraction": "0",     # the script splits the data itself
    "data.standardize": "false",         # features are standardised here with the training statistics
    "analysis.enabled": "false",
    "output.plots": "false",
}


def qgml_settings(quick):
    """Hilbert-space dimensions and epochs."""
    if quick:
        return {"N": [4, 8], "epochs": 60}
    return {"N": [4, 8, 16], "epochs": 300}
