from uh_core.cli.main import main

main()
