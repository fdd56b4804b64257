import sys
from pathlib import Path

# The benchmark is a scripts folder, not an installed distribution.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
