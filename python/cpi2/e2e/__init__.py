"""End-to-end tools over the real local stack: a whole pipeline run (pipeline, monitor), its
scoring (quality), the benches, the scenario replay and the demo."""
