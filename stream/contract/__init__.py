"""stream/contract"""
