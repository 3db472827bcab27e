# wormhole-ns3: the accelerator and a small experiment comparison in a container.
#
#   docker build -t wormhole-ns3 .
#   docker run --rm -v "$PWD/results:/results" wormhole-ns3
#       # -> results/llm-training-gpt-small/: summary.md, summary.json, plots, per-flow tables
#       #    results/memo/: the memo store (run again with --force to see it replay)
#   docker run --rm -v "$PWD:/work" -w /work wormhole-ns3 \
#       wormhole-ns3 compare --json out.json my_script.py      # your own script
#
# Every step is a plain shell command, so the same install runs without docker:
# the RUN lines below are the README's install command.
FROM python:3.11-slim

RUN apt-get update && apt-get install -y --no-install-recommends g++ \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /opt/wormhole-ns3
COPY . .

RUN python3 -m venv .venv && . .venv/bin/activate && pip install .
ENV PATH=/opt/wormhole-ns3/.venv/bin:$PATH \
    WORMHOLE_NS3_CACHE=/opt/wormhole-ns3/.cache

# build the C++ shim once, at image build time, instead of at the first run
RUN python -c "from wormhole_ns3.runtime import native; print(native.build())"

# runs start in the results folder, away from the install (ns-3 searches its libraries below the working directory)
WORKDIR /results
# baseline and accelerated runs of the small GPT preset (16 GPUs, 2 iterations), the memo store
# kept in the results folder (a second run replays from it): about half a minute
CMD ["wormhole-ns3", "experiment", "compare", "llm-training", "--preset", "gpt-small", "--memo", "/results/memo", "--out", "/results/llm-training-gpt-small"]
