"""Make the test helpers in this folder importable (fake_driver)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
