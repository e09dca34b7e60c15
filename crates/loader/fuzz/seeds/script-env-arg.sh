#! /usr/bin/env  python3 -u 
print(1)
