#!/bin/sh
# healthcheck.sh --connect: the server accepts TCP connections (as the official image's check does).
exec mariadb-admin ping -h 127.0.0.1 --silent
