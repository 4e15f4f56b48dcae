import sys

from autograder.cli import main

if __name__ == "__main__":  # importing the module (a tool that walks the package) runs nothing
    sys.exit(main())
