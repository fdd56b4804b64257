"""toolcall-xlam: the ``xlam`` tool-call parser name (Salesforce xLAM) as data.

The format is the response template in ``xlam.json``, served by the ``hf`` engine
(toolcall-hf-response-template); this package holds no parser code.
"""

__version__ = "0.1.0"
