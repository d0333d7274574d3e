from sredrill.cli import main

main()
