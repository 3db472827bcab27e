# wormhole-ns3: the accelerator and its built-in demo in a container.
#
#   docker build -t wormhole-ns3 .
#   docker run --rm wormhole-ns3                                # the small demo
#   docker run --rm -v "$PWD:/work" -w /work wormhole-ns3 \
#       wormhole-ns3 compare my_script.py --json out.json      # your own script
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
RUN python -c "from wormhole_ns3 import native; print(native.build())"

CMD ["wormhole-ns3", "demo", "--small"]
