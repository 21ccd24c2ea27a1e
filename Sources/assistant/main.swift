print("assistant")
