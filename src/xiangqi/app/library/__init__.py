"""The record library (棋谱库): the games database, record files opened and exported, record parsing in
a child process, and the analysis trees kept with each game."""
