from toolcall_bench.run import main

raise SystemExit(main())
