"""What is simulated: fabrics (topologies, queues, transports) and LLM-training workloads.

These build ordinary ns-3 simulations and never import the accelerator
(``accel``) or the memo: a script built from them runs the same under plain
ns-3.
"""
