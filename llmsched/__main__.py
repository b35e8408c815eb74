from llmsched.cli import main

main()
