package com.example;

import java.util.List;

/**
 * Service answers user queries.
 * It caches nothing.
 */
public class Service {
    private final Repo repo;

    public Service(Repo repo) {
        this.repo = repo;
    }

    /** Finds users by name. */
    @Override
    public List<User> find(String name) {
        if (name == null) {
            throw new IllegalArgumentException("name");
        }
        return repo.query("/users/" + name);
    }

    private static int count(List<User> us) { return us.size(); }
}

interface Repo {
    List<User> query(String q);
}
