import MarginCore
