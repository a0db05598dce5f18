from aiayn.cli import main

raise SystemExit(main())
