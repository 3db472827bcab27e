from wormhole_ns3.tools.cli import main

raise SystemExit(main())
