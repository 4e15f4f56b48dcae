"""What students run on their own machine: the visible tests (`autograde check`) and the game (`autograde play`)."""
