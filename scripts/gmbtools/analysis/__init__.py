"""Layer 2, analysis: what the numbers mean. The architecture's facts, the traffic and
Little's-law models, run health, headline picks, the ladders, the tables of pandas frames,
pattern explanations and the peer matrix's cells. Returns data, never text or files; imports
only gmbtools.data and gmbtools.errors."""
