"""stream/commands"""
