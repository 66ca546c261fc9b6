from uh_tui.main import main

main()
