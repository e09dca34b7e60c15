#!/bin/sh -e
echo hello
