module edgeload/bench/native-target

go 1.21
