"""stream/runtime"""
